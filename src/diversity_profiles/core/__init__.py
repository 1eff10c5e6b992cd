"""The foundation every layer stands on: input checks, progress bars, time and memory
budgets, escaping of untrusted text, and named representations. Imports numpy only."""
