"""Measurement: the timing harness, seeded sources, validation against the CPU references, benchmark
records with the hash of the code that produced them, and the job runner (one solve from a job description to a
record)."""
