mod loader;
mod properties;
mod sample;
