mod claude_code;
mod filter;
mod reader;
