//! Integration tests of memory-introspect.
