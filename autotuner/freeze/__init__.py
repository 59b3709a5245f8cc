"""`autotune freeze`: the studies' verified winners written into the ATK folder and
`frozen_configs/` (`freeze`), and the history of frozen versions (`history`)."""
