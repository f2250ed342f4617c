"""Pure parsers: raw vendor output (text or JSON) -> common facts. No I/O, so tests feed them
recorded real device output and the lab's output alike."""
