"""Names the machine a benchmark or an experiment ran on, so every printed ratio and every
results file says where it was measured."""

import os
import platform


def describe() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    parts = [f"{cpu}", f"{os.cpu_count()} logical CPUs", f"Python {platform.python_version()}"]
    try:
        import numpy
        parts.append(f"NumPy {numpy.__version__}")
        import torch
        parts.append(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads")
        if torch.cuda.is_available():
            parts.append(f"GPU {torch.cuda.get_device_name()}")
    except ImportError:
        pass
    return "; ".join(parts)


if __name__ == "__main__":
    print(describe())
