//! Propnet.
