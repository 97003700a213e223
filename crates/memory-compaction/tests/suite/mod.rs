mod cut;
mod files;
mod serialize;
mod settings;
mod support;
mod windows;
