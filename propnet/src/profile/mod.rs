//! Measurements along random playouts that the engines' cost models decide
//! by (how often slots change, see [`activity`]).

pub(crate) mod activity;
