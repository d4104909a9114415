//! pawl-engine's behaviour tests, one binary: gestures, buttons, scroll and device rules as
//! `check(config, script, expected)` cases, property tests, and the tidy test that guards the
//! engine's architecture invariants.

mod script;

mod apps;
mod buttons;
mod devices;
mod fixed_point_vectors;
mod gestures;
mod imports;
mod properties;
mod scroll;
mod tidy;
