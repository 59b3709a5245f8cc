"""`autotune baseline` and `autotune check`: the times each case is judged against, and the
regression check of the frozen port against them."""
