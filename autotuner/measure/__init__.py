"""What every measuring stage shares: accuracy metrics against the float64 golden, the guard
that a timed call never waits for the device, noise-aware comparisons of timing samples, and the
environment and toolchain a number was produced under."""
