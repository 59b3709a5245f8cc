"""`autotune verify`: the accuracy proof of the port and upstream against the float64 golden,
case by case (`verify`), in worker processes (`runner`), printed (`report`) and stored (`store`)."""
