//! GDL checks and grounding.
