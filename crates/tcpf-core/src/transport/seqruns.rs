//! A set of sequence numbers kept as runs `[start, end)`: the packets a TCP receiver holds out
//! of order (its SACK blocks) and the packets a SACK sender knows were received. Operations
//! cost O(log n) in the number of runs (plus the packets newly covered), so neither side scans
//! a window's worth of packets per ACK.

use std::collections::BTreeMap;

/// Runs keyed by their start: disjoint and never adjacent (touching runs merge).
#[derive(Default, Debug)]
pub(crate) struct SeqRuns(BTreeMap<u32, u32>);

impl SeqRuns {
    /// Cover `[lo, hi)`, calling `newly` for each number not covered before, in increasing order.
    pub fn add(&mut self, lo: u32, hi: u32, mut newly: impl FnMut(u32)) {
        if lo >= hi {
            return;
        }
        let (mut start, mut end) = (lo, hi);
        // Numbers below `covered` are in the set (or below the block).
        let mut covered = lo;
        if let Some((&s, &e)) = self.0.range(..lo).next_back() {
            if e >= lo {
                start = s;
                covered = e;
                end = end.max(e);
                self.0.remove(&s);
            }
        }
        while let Some((&s, &e)) = self.0.range(lo..=hi).next() {
            (covered..s).for_each(&mut newly);
            covered = covered.max(e);
            end = end.max(e);
            self.0.remove(&s);
        }
        (covered..hi).for_each(&mut newly);
        self.0.insert(start, end);
    }

    /// Forget the numbers below `seq`.
    pub fn drop_below(&mut self, seq: u32) {
        while let Some((&s, &e)) = self.0.first_key_value() {
            if s >= seq {
                break;
            }
            self.0.remove(&s);
            if e > seq {
                self.0.insert(seq, e);
                break;
            }
        }
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The lowest run.
    pub fn first(&self) -> Option<(u32, u32)> {
        self.0.first_key_value().map(|(&s, &e)| (s, e))
    }

    /// The run holding `seq`, if any.
    pub fn run_of(&self, seq: u32) -> Option<(u32, u32)> {
        match self.0.range(..=seq).next_back() {
            Some((&s, &e)) if seq < e => Some((s, e)),
            _ => None,
        }
    }

    /// The runs in increasing order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u32, u32)> + '_ {
        self.0.iter().map(|(&s, &e)| (s, e))
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
