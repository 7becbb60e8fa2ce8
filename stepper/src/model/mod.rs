//! Layer `model` (pure): the vocabulary every other layer speaks — typed reads of one StatefulSet
//! ([`set`]), pod predicates ([`pods`]) and the gates' stable reasons ([`reasons`]).
//!
//! Imports nothing of the crate (ARCHITECTURE.md, "Layers").

pub mod pods;
pub mod reasons;
pub mod set;
