"""compare.py GOT.npy WANT.npy RTOL: ARCHITECTURE.md's agreement rule,
|got - want| <= atol + rtol * |want| element by element with atol = rtol *
max|want|. Prints the largest error and exits 0 when they agree, 1 when
not, 2 when a file cannot be read or the shapes differ."""
import sys

import numpy as np


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip())
        return 2
    try:
        got = np.load(sys.argv[1]).astype(np.float64)
        want = np.load(sys.argv[2]).astype(np.float64)
        rtol = float(sys.argv[3])
    except (OSError, ValueError) as e:
        print("cannot compare: %s" % e)
        return 2
    if got.shape != want.shape:
        print("shapes differ: %s against %s" % (got.shape, want.shape))
        return 2
    if want.size == 0:
        print("empty outputs agree")
        return 0
    atol = rtol * float(np.max(np.abs(want)))
    err = np.abs(got - want)
    bound = atol + rtol * np.abs(want)
    bad = ~(err <= bound)
    worst = int(np.argmax(err - bound))
    print("max |error| %.3g (bound %.3g at the worst element), %d of %d outside rtol %g" %
          (float(np.max(err)), float(bound.flat[worst]), int(np.sum(bad)), want.size, rtol))
    return 1 if np.any(bad) else 0


if __name__ == "__main__":
    sys.exit(main())
