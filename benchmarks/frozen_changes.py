"""Count the frozen configs that changed between the rounds of `benchmarks/refreeze.sh`.

    python benchmarks/frozen_changes.py WORK

For each op and round, compares `frozen_configs/<soc>/<op>.json` as the round's freeze left it
with the round before (the first round with the committed files, `before`), per (kernel, case).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def configs(path: Path) -> dict[tuple[str, str], dict]:
    """(kernel, case) -> frozen config in one frozen_configs file (none where it is missing)."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    kernels = data["frozen"]
    return {
        (kernel, entry["case"]): entry["config"]
        for kernel, entries in kernels.items()
        for entry in entries
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work", type=Path)
    args = parser.parse_args()
    rounds = ["before", *sorted(p.name for p in args.work.iterdir() if p.name.isdigit())]
    for op in sorted(p.name for p in (args.work / "before").iterdir()):
        for earlier, later in zip(rounds, rounds[1:], strict=False):
            old = configs(args.work / earlier / op / f"{op}.json")
            new = configs(args.work / later / op / f"{op}.json")
            changed = [key for key in new if old.get(key) != new[key]]
            print(f"{op}: round {later} vs {earlier}: {len(changed)} of {len(new)} changed")
            for kernel, case in changed:
                print(f"  {kernel} {case}: {old.get((kernel, case))} -> {new[(kernel, case)]}")


if __name__ == "__main__":
    main()
