//! Delta Lake log replay (seed 004). Being written.
