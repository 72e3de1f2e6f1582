//! Measurements along random playouts that the evaluators' cost models decide
//! by (how often slots change, see [`activity`]; how sources change and
//! how often skip conditions hold, see [`skips`]), and every constant of
//! those cost models ([`costs`]).

pub(crate) mod activity;
pub(crate) mod costs;
pub(crate) mod skips;
