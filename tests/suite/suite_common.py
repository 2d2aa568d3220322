"""What the suite checks share: stub programs that stand in for real tools (they record their
calls instead of building or installing), and the verdict each check ends with."""
import os


def write_executable(path, text):
    """Writes the script `text` to `path`, executable."""
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)


def make_stubs(folder, tools, text):
    """Creates `folder` holding one executable `text` under each name in `tools`."""
    os.makedirs(folder)
    for tool in tools:
        write_executable(os.path.join(folder, tool), text)


def report(name, failures, held):
    """Prints each of `failures` (or `held` when there are none) after `name`, one a line;
    returns the exit status ctest reads (0 when nothing failed)."""
    for f in failures:
        print(f"{name}: {f}")
    if not failures:
        print(f"{name}: {held}")
    return 1 if failures else 0
