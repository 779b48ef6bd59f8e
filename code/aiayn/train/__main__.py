"""``python -m aiayn.train ...`` = ``aiayn-train ...`` (and what torchrun launches with ``-m``)."""

from .cli import train_main

if __name__ == "__main__":
    train_main()
