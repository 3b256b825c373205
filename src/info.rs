//! `pexe2wasm info`: facts about a pexe (sizes, counts, intrinsics, IRT/PPAPI interfaces).
