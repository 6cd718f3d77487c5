"""The `gradlab` command (placeholder until the engine's demo lands)."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    print("gradlab: demo arrives with the engine")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
