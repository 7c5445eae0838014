//! libstdc++'s `std::sort` (introsort: median-of-three quicksort above 16 elements, heapsort
//! when too deep, insertion sort at the end), step for step. LogGOPSim orders the ops that
//! become executable together with `std::sort` by op type only, which is not stable: for more
//! than 16 ops the order among ops of the same type, and so the simulated times, depend on the
//! exact algorithm. Reproducing it keeps collc's LogGP results identical to LogGOPSim's.

/// Sorts `v` with `less` exactly as libstdc++'s `std::sort(first, last, comp)` does.
pub fn sort<T: Copy>(v: &mut [T], less: impl Fn(&T, &T) -> bool + Copy) {
    if v.len() > 1 {
        let depth = 2 * (usize::BITS - 1 - v.len().leading_zeros()) as usize;
        introsort_loop(v, 0, v.len(), depth, less);
        final_insertion_sort(v, 0, v.len(), less);
    }
}

const THRESHOLD: usize = 16;

fn introsort_loop<T: Copy>(
    v: &mut [T],
    first: usize,
    mut last: usize,
    mut depth: usize,
    less: impl Fn(&T, &T) -> bool + Copy,
) {
    while last - first > THRESHOLD {
        if depth == 0 {
            partial_sort(v, first, last, less);
            return;
        }
        depth -= 1;
        let cut = partition_pivot(v, first, last, less);
        introsort_loop(v, cut, last, depth, less);
        last = cut;
    }
}

fn partition_pivot<T: Copy>(
    v: &mut [T],
    first: usize,
    last: usize,
    less: impl Fn(&T, &T) -> bool,
) -> usize {
    let mid = first + (last - first) / 2;
    move_median_to_first(v, first, first + 1, mid, last - 1, &less);
    unguarded_partition(v, first + 1, last, first, &less)
}

fn move_median_to_first<T: Copy>(
    v: &mut [T],
    result: usize,
    a: usize,
    b: usize,
    c: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    let l = |x: usize, y: usize, v: &[T]| less(&v[x], &v[y]);
    let pick = if l(a, b, v) {
        if l(b, c, v) {
            b
        } else if l(a, c, v) {
            c
        } else {
            a
        }
    } else if l(a, c, v) {
        a
    } else if l(b, c, v) {
        c
    } else {
        b
    };
    v.swap(result, pick);
}

fn unguarded_partition<T: Copy>(
    v: &mut [T],
    mut first: usize,
    mut last: usize,
    pivot: usize,
    less: &impl Fn(&T, &T) -> bool,
) -> usize {
    loop {
        while less(&v[first], &v[pivot]) {
            first += 1;
        }
        last -= 1;
        while less(&v[pivot], &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn final_insertion_sort<T: Copy>(
    v: &mut [T],
    first: usize,
    last: usize,
    less: impl Fn(&T, &T) -> bool,
) {
    if last - first > THRESHOLD {
        insertion_sort(v, first, first + THRESHOLD, &less);
        for i in first + THRESHOLD..last {
            unguarded_linear_insert(v, i, &less);
        }
    } else {
        insertion_sort(v, first, last, &less);
    }
}

fn insertion_sort<T: Copy>(v: &mut [T], first: usize, last: usize, less: &impl Fn(&T, &T) -> bool) {
    if first == last {
        return;
    }
    for i in first + 1..last {
        if less(&v[i], &v[first]) {
            let val = v[i];
            v.copy_within(first..i, first + 1);
            v[first] = val;
        } else {
            unguarded_linear_insert(v, i, less);
        }
    }
}

fn unguarded_linear_insert<T: Copy>(v: &mut [T], mut last: usize, less: &impl Fn(&T, &T) -> bool) {
    let val = v[last];
    let mut next = last - 1;
    while less(&val, &v[next]) {
        v[last] = v[next];
        last = next;
        next -= 1;
    }
    v[last] = val;
}

fn partial_sort<T: Copy>(v: &mut [T], first: usize, last: usize, less: impl Fn(&T, &T) -> bool) {
    // __heap_select(first, last, last) is __make_heap here; then __sort_heap.
    let len = last - first;
    if len >= 2 {
        let mut parent = (len - 2) / 2;
        loop {
            let value = v[first + parent];
            adjust_heap(v, first, parent, len, value, &less);
            if parent == 0 {
                break;
            }
            parent -= 1;
        }
    }
    let mut end = last;
    while end - first > 1 {
        end -= 1;
        let value = v[end];
        v[end] = v[first];
        adjust_heap(v, first, 0, end - first, value, &less);
    }
}

fn adjust_heap<T: Copy>(
    v: &mut [T],
    first: usize,
    mut hole: usize,
    len: usize,
    value: T,
    less: &impl Fn(&T, &T) -> bool,
) {
    let top = hole;
    let mut second = hole;
    while second < (len - 1) / 2 {
        second = 2 * (second + 1);
        if less(&v[first + second], &v[first + second - 1]) {
            second -= 1;
        }
        v[first + hole] = v[first + second];
        hole = second;
    }
    if len & 1 == 0 && second == (len - 2) / 2 {
        second = 2 * (second + 1);
        v[first + hole] = v[first + second - 1];
        hole = second - 1;
    }
    // __push_heap(first, hole, top, value)
    while hole > top {
        let parent = (hole - 1) / 2;
        if !less(&v[first + parent], &value) {
            break;
        }
        v[first + hole] = v[first + parent];
        hole = parent;
    }
    v[first + hole] = value;
}

#[cfg(test)]
mod tests {
    use super::sort;

    #[test]
    fn sorts_and_is_stable_below_the_threshold() {
        let mut v: Vec<(u8, u32)> = (0..16).map(|i| ((i * 7 % 3) as u8, i)).collect();
        sort(&mut v, |a, b| a.0 < b.0);
        assert!(
            v.windows(2)
                .all(|w| w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1))
        );
    }

    #[test]
    fn sorts_large_inputs() {
        for n in [17usize, 40, 100, 1000] {
            let mut v: Vec<(u8, u32)> = (0..n as u32).map(|i| ((i * 7919 % 3) as u8, i)).collect();
            sort(&mut v, |a, b| a.0 < b.0);
            assert!(v.windows(2).all(|w| w[0].0 <= w[1].0), "{n}");
            let mut ids: Vec<u32> = v.iter().map(|x| x.1).collect();
            ids.sort_unstable();
            assert_eq!(ids, (0..n as u32).collect::<Vec<_>>());
        }
        // The heapsort fallback.
        let mut v: Vec<u32> = (0..5000u32)
            .map(|i| i.wrapping_mul(2654435761) % 1000)
            .collect();
        super::partial_sort(&mut v, 0, 5000, |a: &u32, b: &u32| a < b);
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
    }
}
