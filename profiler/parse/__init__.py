"""Parsers: profiler output (nsys, ncu, nvprof, CUPTI records, worker results) -> tables of
`profiler.schema`. Pure: nothing here starts a process."""
