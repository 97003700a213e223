mod filter;
mod reader;
