//! Integration tests of the nexe stage: the real corpus and the validator's rules.
mod corpus;
mod native;
mod rules;
