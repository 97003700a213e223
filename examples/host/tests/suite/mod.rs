mod long_session;
mod random_scripts;
mod script_file;
mod seams;
