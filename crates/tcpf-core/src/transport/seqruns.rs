//! A set of sequence numbers kept as runs `[start, end)`: the packets a TCP receiver holds out
//! of order (its SACK blocks) and the packets a SACK sender knows were received. Lookups cost
//! O(log n) in the number of runs, changes a move of the runs above (plus the packets newly
//! covered), so neither side scans a window's worth of packets per ACK.

/// Runs `[start, end)` in increasing order: disjoint and never adjacent (touching runs merge).
/// A sorted vector: the sets held are a few runs (a receiver's holes, a sender's SACKed
/// blocks), for which a binary search and a short move beat a B-tree's node walks.
#[derive(Default, Debug)]
pub(crate) struct SeqRuns(Vec<(u32, u32)>);

impl SeqRuns {
    /// Cover `[lo, hi)`, calling `newly` for each number not covered before, in increasing order.
    pub fn add(&mut self, lo: u32, hi: u32, mut newly: impl FnMut(u32)) {
        if lo >= hi {
            return;
        }
        let v = &mut self.0;
        let (mut start, mut end) = (lo, hi);
        // Numbers below `covered` are in the set (or below the block).
        let mut covered = lo;
        // The runs [first, k) merge into one: the run starting below `lo` if it reaches `lo`,
        // then those starting in [lo, hi].
        let mut first = v.partition_point(|&(s, _)| s < lo);
        let mut k = first;
        if first > 0 {
            let (s, e) = v[first - 1];
            if e >= lo {
                first -= 1;
                start = s;
                covered = e;
                end = end.max(e);
            }
        }
        while let Some(&(s, e)) = v.get(k) {
            if s > hi {
                break;
            }
            (covered..s).for_each(&mut newly);
            covered = covered.max(e);
            end = end.max(e);
            k += 1;
        }
        (covered..hi).for_each(&mut newly);
        if k == first {
            v.insert(first, (start, end));
        } else {
            v[first] = (start, end);
            v.drain(first + 1..k);
        }
    }

    /// Forget the numbers below `seq`.
    #[inline]
    pub fn drop_below(&mut self, seq: u32) {
        if self.0.first().is_some_and(|&(s, _)| s < seq) {
            // Runs ending at or below `seq` go; the next one is cut at `seq` if it starts below.
            let n = self.0.partition_point(|&(_, e)| e <= seq);
            self.0.drain(..n);
            if let Some(r) = self.0.first_mut() {
                r.0 = r.0.max(seq);
            }
        }
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The lowest run.
    #[inline]
    pub fn first(&self) -> Option<(u32, u32)> {
        self.0.first().copied()
    }

    /// The run holding `seq`, if any.
    #[inline]
    pub fn run_of(&self, seq: u32) -> Option<(u32, u32)> {
        let i = self.0.partition_point(|&(s, _)| s <= seq);
        match i.checked_sub(1).map(|i| self.0[i]) {
            Some((s, e)) if seq < e => Some((s, e)),
            _ => None,
        }
    }

    /// The runs in increasing order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u32, u32)> + '_ {
        self.0.iter().copied()
    }

    /// The `n`-th highest number in the set (n ≥ 1), if it holds at least `n`.
    pub fn nth_highest(&self, n: u32) -> Option<u32> {
        let mut above = 0;
        for (s, e) in self.iter().rev() {
            if above + (e - s) >= n {
                return Some(e - (n - above));
            }
            above += e - s;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::SeqRuns;
    use crate::sim::Rng;
    use std::collections::BTreeSet;

    #[test]
    fn runs_match_a_set_of_numbers() {
        let mut runs = SeqRuns::default();
        let mut set = BTreeSet::new();
        let mut rng = Rng::new(7);
        let mut floor = 0u32;
        for step in 0..20_000u32 {
            if step % 50 == 49 {
                floor += rng.range(0.0, 40.0) as u32;
                runs.drop_below(floor);
                set.retain(|&s| s >= floor);
            } else {
                let lo = floor + rng.range(0.0, 3000.0) as u32;
                let hi = lo + rng.range(0.0, 12.0) as u32;
                let mut newly = Vec::new();
                runs.add(lo, hi, |s| newly.push(s));
                let expected: Vec<u32> = (lo..hi).filter(|s| !set.contains(s)).collect();
                assert_eq!(newly, expected, "numbers newly covered by [{lo}, {hi})");
                set.extend(lo..hi);
            }
            for n in [1, 2, 3, 17] {
                assert_eq!(runs.nth_highest(n), set.iter().rev().nth(n as usize - 1).copied(), "n = {n}");
            }
            let probe = floor + rng.range(0.0, 3000.0) as u32;
            let run = runs.run_of(probe);
            assert_eq!(run.is_some(), set.contains(&probe), "{probe}");
            if let Some((s, e)) = run {
                assert!((s..e).all(|x| set.contains(&x)) && !set.contains(&e) && (s == 0 || !set.contains(&(s - 1))));
            }
        }
        // Runs are disjoint, never touch, and hold exactly the set.
        let v: Vec<(u32, u32)> = runs.iter().collect();
        assert!(v.windows(2).all(|w| w[0].1 < w[1].0), "{v:?}");
        assert_eq!(v.iter().map(|(s, e)| e - s).sum::<u32>() as usize, set.len());
        assert_eq!(runs.first(), v.first().copied());
    }
}
