//! Working memory: conformance with the reference, the user reports, properties.

mod working_memory;
