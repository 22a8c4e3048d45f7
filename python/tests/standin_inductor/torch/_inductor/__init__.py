"""Stand-in of torch._inductor's autotuning hook points (torch 2.11)."""
