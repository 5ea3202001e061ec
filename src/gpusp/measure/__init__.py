"""Measurement: the timing harness, seeded sources, validation against the CPU references, benchmark
records, the job runner (one solve from a job description to a record) and the config's job matrix."""
