//! The fuzz soak: arbitrary and mutated requests through the `validate` entry point (natively, the same
//! function the wasm export calls; in wasm a panic is a trap, which the API server turns into a failed
//! admission). Every answer must be a well-formed ValidationResponse: accepted (maybe with a JSON object as
//! `mutated_object`) or rejected with a message; where the request is one the independent oracle
//! (`oracle.rs`, the table written a second way) can read, the answer must be the table's, row and
//! returned object. `FUZZ_CASES` cases (4,000 by default; `make fuzz` runs 1,000,000), from every real
//! AdmissionReview in `fixtures/admission/` and `test_data/`.
//!
//! `corpus`: those reviews and JSON Pointer edits; `cases`: how a case is drawn and made into a payload;
//! `fuzz`: the soak and its judgement; `named`: hand-picked bad and large inputs.

mod cases;
mod corpus;
mod fuzz;
mod named;
mod oracle;
