//! The differential check over fixed seeds (what the fuzz target `lower_diff` does, on
//! deterministic inputs, so CI runs the machinery).
mod regressions;
mod seeds;
mod stack;
