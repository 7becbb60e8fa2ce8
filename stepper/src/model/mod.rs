//! Layer `model` (pure): the vocabulary every other layer speaks — typed reads of one StatefulSet
//! ([`set`]), pod predicates ([`pods`]), the gates' stable reasons ([`reasons`]) and the declaration of
//! which fields of the objects each reader reads ([`fields`]).
//!
//! Imports nothing of the crate (ARCHITECTURE.md, "Layers").

pub mod degraded;
pub mod fields;
pub mod pods;
pub mod reasons;
pub mod set;
