"""Load every task folder under DIR with Harbor's own task class.

Run by tests/bench_export.rs with the Python that BATON_HARBOR_PYTHON names
(one with the `harbor` package installed; `make harbor-test`). Prints one
JSON object per task: what Harbor read, and what Harbor's task linter
(`harbor.lint.task.lint_task`) finds. Any task Harbor refuses raises.
"""

import json
import sys
from pathlib import Path

from harbor.lint.task import lint_task
from harbor.models.task.task import Task


def main(root: Path) -> None:
    dirs = sorted(p for p in root.iterdir() if p.is_dir())
    if not dirs:
        raise SystemExit(f"no task folders in {root}")
    for d in dirs:
        if not Task.is_valid_dir(d):
            raise SystemExit(f"harbor: {d} is not a valid task folder")
        t = Task(d)
        test = t.paths.discovered_test_path_for(t.config.environment.os)
        solve = t.paths.discovered_solve_path_for(t.config.environment.os)
        print(
            json.dumps(
                {
                    "name": t.name,
                    "instruction": t.instruction,
                    "schema_version": t.config.schema_version,
                    "metadata": t.config.metadata,
                    "workdir": t.config.environment.workdir,
                    "dockerfile": (t.paths.environment_dir / "Dockerfile").is_file(),
                    "test": str(test.relative_to(t.task_dir)) if test else None,
                    "solve": str(solve.relative_to(t.task_dir)) if solve else None,
                    "lint": [f"{f.rule}: {f.message}" for f in lint_task(d)],
                }
            )
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
