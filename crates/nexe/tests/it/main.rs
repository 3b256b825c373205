//! Integration tests of the nexe stage: the real corpus, the validator's rules, and the
//! translator (lifted code against this CPU, the corpus lifted).
mod corpus;
// The lifting tests run the same bytes natively: x86-64 Linux hosts only.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod lift;
mod lift_corpus;
mod native;
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod native_x86;
mod rules;
mod run;
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod structure;
