mod events;
mod settings;
