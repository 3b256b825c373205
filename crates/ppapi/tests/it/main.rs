//! Tests of the Pepper interface description: the parser, the description itself (layouts,
//! signatures, slot counts), the host check, and coverage of every name the real corpus asks for.

mod contract;
mod corpus;
mod description;
mod host_check;
mod parser;
