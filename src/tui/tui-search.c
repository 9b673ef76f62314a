/* Small sorting and searching pieces the canvas and the layout share:
 * qsort that tolerates empty arrays, binary searches over sorted ints, and
 * a Fenwick tree (prefix sums with point updates) for sweep-line counts. */
#include "config.h"

#include <stdlib.h>

#include "st-tui.h"

void
st_sort(void *base, size_t n, size_t size, int (*compare)(const void *, const void *))
{
	/* qsort must not be handed a null array, even an empty one. */
	if (n > 1)
		qsort(base, n, size, compare);
}

int
st_compare_int(const void *a, const void *b)
{
	int p = *(const int *)a, q = *(const int *)b;
	return (p > q) - (p < q);
}

int
st_lower_bound(const int *v, int n, int x)
{
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
st_upper_bound(const int *v, int n, int x)
{
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (v[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
st_unique_sorted(int *v, int n)
{
	st_sort(v, (size_t)n, sizeof *v, st_compare_int);
	int m = 0;
	for (int i = 0; i < n; i++) {
		if (m == 0 || v[m - 1] != v[i])
			v[m++] = v[i];
	}
	return m;
}

void
st_fenwick_add(int *tree, int n, int i, int d)
{
	for (i++; i <= n; i += i & -i)
		tree[i] += d;
}

int64_t
st_fenwick_prefix(const int *tree, int i)
{
	int64_t s = 0;
	for (; i > 0; i -= i & -i)
		s += tree[i];
	return s;
}

void
st_scroll_keep(int *top, int row, int visible, int total)
{
	if (visible < 1)
		visible = 1;
	if (row < *top)
		*top = row;
	if (row >= *top + visible)
		*top = row - visible + 1;
	if (*top > total - visible)
		*top = total - visible;
	if (*top < 0)
		*top = 0;
}
