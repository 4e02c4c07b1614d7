import sys

sys.path.insert(0, "/testbed")
import calc  # noqa: E402


def test_add():
    assert calc.add(2, 3) == 5


def test_mul():
    assert calc.mul(2, 3) == 6


# Print each test's status as pytest -rA's summary does.
failed = 0
print("=========================== short test summary info ============================")
for name, fn in sorted(globals().items()):
    if name.startswith("test_") and callable(fn):
        try:
            fn()
            print(f"PASSED tests/test_calc.py::{name}")
        except AssertionError:
            failed += 1
            print(f"FAILED tests/test_calc.py::{name} - AssertionError")
sys.exit(1 if failed else 0)
