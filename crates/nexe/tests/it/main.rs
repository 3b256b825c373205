//! Integration tests of the nexe stage: the real corpus and the validator's rules.
mod corpus;
mod lift;
mod lift_corpus;
mod native;
mod native_x86;
mod rules;
