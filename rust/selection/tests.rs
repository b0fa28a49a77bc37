//! Property tests: every operation, for both representations and mixed pairs, against a
//! plain `Vec<bool>` model (the offset bookkeeping is where bugs hide).

use proptest::prelude::*;

use super::*;

/// Bools made of runs of random length, so both short and long runs occur.
fn bools(max_len: usize) -> impl Strategy<Value = Vec<bool>> {
    prop::collection::vec((any::<bool>(), prop_oneof![1usize..4, 1usize..40, 1usize..200]), 0..12).prop_map(
        move |runs| {
            let mut out = Vec::new();
            for (value, len) in runs {
                out.extend(std::iter::repeat_n(value, len));
            }
            out.truncate(max_len);
            out
        },
    )
}

/// Builds a selection of `bools` in the requested representation, sometimes from a sliced
/// buffer (bit offset not 0) to exercise offset handling.
fn build(bools: &[bool], as_mask: bool, sliced: bool) -> RowSelection {
    if !as_mask {
        let runs = bools.iter().map(|&b| if b { RowSelector::select(1) } else { RowSelector::skip(1) });
        return RowSelection::from_runs(runs).unwrap();
    }
    if sliced {
        let mut padded = vec![true; 3];
        padded.extend_from_slice(bools);
        padded.push(false);
        return RowSelection::from_mask(BooleanBuffer::from(padded).slice(3, bools.len()));
    }
    RowSelection::from_bools(bools)
}

fn selection(max_len: usize) -> impl Strategy<Value = (Vec<bool>, RowSelection)> {
    (bools(max_len), any::<bool>(), any::<bool>()).prop_map(|(b, as_mask, sliced)| {
        let s = build(&b, as_mask, sliced);
        (b, s)
    })
}

/// Two selections over the same number of rows.
fn same_length_pair() -> impl Strategy<Value = (Vec<bool>, RowSelection, Vec<bool>, RowSelection)> {
    bools(600)
        .prop_flat_map(|a| {
            let len = a.len();
            (Just(a), prop::collection::vec(any::<bool>(), len), any::<bool>(), any::<bool>(), any::<bool>())
        })
        .prop_map(|(a, b, mask_a, mask_b, sliced)| {
            let (sa, sb) = (build(&a, mask_a, sliced), build(&b, mask_b, !sliced));
            (a, sa, b, sb)
        })
}

/// A selection and a second selection over its selected rows.
fn and_then_pair() -> impl Strategy<Value = (Vec<bool>, RowSelection, Vec<bool>, RowSelection)> {
    bools(600)
        .prop_flat_map(|a| {
            let selected = a.iter().filter(|x| **x).count();
            (
                Just(a),
                bools(usize::MAX).prop_map(move |mut b| {
                    b.resize(selected, true);
                    b
                }),
                any::<bool>(),
                any::<bool>(),
                any::<bool>(),
            )
        })
        .prop_map(|(a, b, mask_a, mask_b, sliced)| {
            let (sa, sb) = (build(&a, mask_a, sliced), build(&b, mask_b, sliced));
            (a, sa, b, sb)
        })
}

fn model_runs(bools: &[bool]) -> Vec<RowSelector> {
    let mut runs: Vec<RowSelector> = Vec::new();
    for &b in bools {
        match runs.last_mut() {
            Some(last) if last.skip != b => last.row_count += 1,
            _ => runs.push(RowSelector { row_count: 1, skip: !b }),
        }
    }
    runs
}

fn check(selection: &RowSelection, expected: &[bool]) -> Result<(), TestCaseError> {
    prop_assert_eq!(selection.to_bools(), expected.to_vec());
    prop_assert_eq!(selection.row_count(), expected.len());
    prop_assert_eq!(selection.selected_count(), expected.iter().filter(|b| **b).count());
    prop_assert_eq!(selection.runs(), model_runs(expected));
    prop_assert_eq!(selection.iter_runs().collect::<Vec<_>>(), model_runs(expected));
    let runs = model_runs(expected).len();
    prop_assert_eq!(selection.run_count(), runs);
    for n in [0, 1, runs.saturating_sub(1), runs, runs + 1] {
        prop_assert_eq!(selection.has_at_least_runs(n), runs >= n, "at least {} runs of {}", n, runs);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn queries_match_model((b, s) in selection(600)) {
        check(&s, &b)?;
        prop_assert_eq!(s.skipped_count(), b.iter().filter(|x| !**x).count());
        prop_assert_eq!(s.selects_any(), b.iter().any(|x| *x));
        let ranges: Vec<_> = s.selected_ranges();
        let mut from_ranges = vec![false; b.len()];
        for r in &ranges { from_ranges[r.clone()].iter_mut().for_each(|x| *x = true); }
        prop_assert_eq!(&from_ranges, &b);
        check(&RowSelection::from_ranges(&ranges, b.len()).unwrap(), &b)?;
        check(&s.clone().into_representation(Representation::Mask), &b)?;
        check(&s.clone().into_representation(Representation::Selectors), &b)?;
        prop_assert_eq!(&s, &build(&b, !s.is_mask(), false));
    }

    #[test]
    fn count_set_bits_matches_model(b in bools(2_000), start in 0usize..130, end_cut in 0usize..130) {
        // Any bit offset and length: a head and a tail around the aligned words, or neither.
        let buffer = BooleanBuffer::from(b.as_slice());
        let start = start.min(b.len());
        let len = (b.len() - start).saturating_sub(end_cut);
        let expected = b[start..start + len].iter().filter(|x| **x).count();
        prop_assert_eq!(count_set_bits(&buffer.slice(start, len)), expected);
    }

    #[test]
    fn windows_cover_the_rows_in_order((b, s) in selection(600), cuts in prop::collection::vec(0usize..80, 0..20)) {
        let mut windows = s.windows();
        let mut start = 0;
        for cut in cuts.into_iter().chain([usize::MAX]) {
            let len = cut.min(b.len() - start);
            let window: Vec<bool> = windows.next(len).iter().collect();
            prop_assert_eq!(&window[..], &b[start..start + len]);
            start += len;
        }
    }

    #[test]
    fn and_then_matches_model((a, sa, b, sb) in and_then_pair()) {
        let mut expected = a.clone();
        let mut inner = b.iter();
        for row in expected.iter_mut().filter(|x| **x) {
            *row = *inner.next().unwrap();
        }
        check(&sa.and_then(&sb).unwrap(), &expected)?;
    }

    #[test]
    fn and_then_rejects_wrong_length((_a, sa, _b, sb) in and_then_pair(), extra in 1usize..5) {
        let longer = RowSelection::from_bools(&vec![true; sb.row_count() + extra]);
        prop_assert!(sa.and_then(&longer).is_err());
    }

    #[test]
    fn intersection_and_union_match_model((a, sa, b, sb) in same_length_pair()) {
        let and: Vec<bool> = a.iter().zip(&b).map(|(x, y)| *x && *y).collect();
        let or: Vec<bool> = a.iter().zip(&b).map(|(x, y)| *x || *y).collect();
        check(&sa.intersection(&sb).unwrap(), &and)?;
        check(&sa.union(&sb).unwrap(), &or)?;
        check(&sb.intersection(&sa).unwrap(), &and)?;
        check(&sb.union(&sa).unwrap(), &or)?;
    }

    #[test]
    fn split_off_and_slice_match_model((b, s) in selection(600), at in 0usize..700, len in 0usize..300) {
        let (head, tail) = s.split_off(at);
        let cut = at.min(b.len());
        check(&head, &b[..cut])?;
        check(&tail, &b[cut..])?;
        let start = at.min(b.len());
        let len = len.min(b.len() - start);
        check(&s.slice(start, len).unwrap(), &b[start..start + len])?;
        prop_assert!(s.slice(start, b.len() - start + 1).is_err());
    }

    #[test]
    fn offset_limit_trim_match_model((b, s) in selection(600), n in 0usize..400) {
        let mut offset = b.clone();
        offset.iter_mut().filter(|x| **x).take(n).for_each(|x| *x = false);
        check(&s.offset(n), &offset)?;

        let mut limit = b.clone();
        limit.iter_mut().filter(|x| **x).skip(n).for_each(|x| *x = false);
        check(&s.limit(n), &limit)?;

        let end = b.iter().rposition(|x| *x).map_or(0, |i| i + 1);
        check(&s.trim(), &b[..end])?;
    }

    #[test]
    fn batch_expansion_matches_model((b, s) in selection(600), batch in 1usize..70) {
        let mut expected = b.clone();
        for chunk in expected.chunks_mut(batch) {
            if chunk.iter().any(|x| *x) { chunk.iter_mut().for_each(|x| *x = true); }
        }
        let expanded = s.expand_to_batch_boundaries(batch).unwrap();
        check(&expanded, &expected)?;
        prop_assert_eq!(expanded.is_mask(), s.is_mask());
    }

    #[test]
    fn from_filters_matches_model(parts in prop::collection::vec(prop::collection::vec(prop::option::of(any::<bool>()), 0..100), 0..5)) {
        let arrays: Vec<BooleanArray> = parts.iter().map(|p| BooleanArray::from(p.clone())).collect();
        let expected: Vec<bool> = parts.iter().flatten().map(|v| v.unwrap_or(false)).collect();
        check(&RowSelection::from_filters(&arrays), &expected)?;
        // A sliced filter array: the values carry a bit offset.
        if let Some(first) = arrays.first().filter(|a| a.len() > 2) {
            let sliced = first.slice(1, first.len() - 2);
            let expected: Vec<bool> = parts[0][1..parts[0].len() - 1].iter().map(|v| v.unwrap_or(false)).collect();
            check(&RowSelection::from_filters(&[sliced]), &expected)?;
        }
    }

    #[test]
    fn policy_matches_definition((b, s) in selection(600), threshold in 1usize..64) {
        let runs = model_runs(&b).len();
        let expected = if b.len() < runs * threshold { Representation::Mask } else { Representation::Selectors };
        prop_assert_eq!(SelectionPolicy::Auto { threshold }.choose(&s), expected);
        check(&s.clone().with_policy(SelectionPolicy::Auto { threshold }), &b)?;
    }

    #[test]
    fn scan_ranges_match_model((b, s) in selection(600), page_sizes in prop::collection::vec(1usize..80, 1..20)) {
        let mut first_rows = vec![0usize];
        for size in &page_sizes { first_rows.push(first_rows.last().unwrap() + size); }
        first_rows.pop();
        let pages: Vec<PageLocation> = first_rows.iter().enumerate().map(|(i, &row)| PageLocation {
            offset: 1000 + 100 * i as u64, compressed_size: 60 + i as u64, first_row_index: row as u64,
        }).collect();
        let expected_kept: Vec<bool> = (0..pages.len()).map(|i| {
            let end = first_rows.get(i + 1).copied().unwrap_or(usize::MAX).min(b.len());
            let start = first_rows[i].min(b.len());
            b[start..end].iter().any(|x| *x)
        }).collect();
        prop_assert_eq!(s.selected_pages(&pages).unwrap(), expected_kept.clone());
        let expected_counts: Vec<usize> = (0..pages.len()).map(|i| {
            let end = first_rows.get(i + 1).copied().unwrap_or(usize::MAX).min(b.len());
            b[first_rows[i].min(b.len())..end].iter().filter(|x| **x).count()
        }).collect();
        prop_assert_eq!(s.selected_rows_by_page(&pages).unwrap(), expected_counts);
        let expected_ranges: Vec<_> = pages.iter().zip(&expected_kept).filter(|(_, k)| **k)
            .map(|(p, _)| p.offset..p.offset + p.compressed_size).collect();
        prop_assert_eq!(s.scan_ranges(&pages).unwrap(), expected_ranges.clone());

        // Coalescing with a gap of 40 merges pages i and i+1 (gap 40 - i) and never changes
        // which bytes are covered beyond the gaps.
        let coalesced = s.scan_ranges_with(&pages, Some(10..1000), Some(40)).unwrap();
        for r in &expected_ranges {
            prop_assert!(coalesced.iter().any(|c| c.start <= r.start && r.end <= c.end));
        }
        prop_assert!(coalesced.windows(2).all(|w| w[1].start > w[0].end + 40));
        if expected_ranges.is_empty() { prop_assert!(coalesced.is_empty()); }
    }

    #[test]
    fn read_plan_reproduces_selection_and_never_masks_pruned_pages(
        (b, s) in selection(600),
        page_sizes in prop::collection::vec(1usize..80, 1..20),
        policy in prop_oneof![Just(SelectionPolicy::Mask), Just(SelectionPolicy::Selectors), (1usize..64).prop_map(|t| SelectionPolicy::Auto { threshold: t })],
        with_pages in any::<bool>(),
    ) {
        let mut first_rows = vec![0usize];
        for size in &page_sizes { first_rows.push(first_rows.last().unwrap() + size); }
        first_rows.pop();
        let plan = ReadPlan::new(&s, policy, with_pages.then_some(first_rows.as_slice())).unwrap();

        // Decoding the decoder selection, then applying the post filter, gives the selection.
        let decoder = plan.decoder_selection();
        prop_assert_eq!(decoder.row_count(), b.len());
        let decoded: Vec<usize> = decoder.selected_ranges().into_iter().flatten().collect();
        prop_assert_eq!(decoded.len(), plan.decoded_rows());
        let kept: Vec<usize> = match plan.post_filter() {
            Some(filter) => decoded.iter().zip(filter.iter()).filter(|(_, k)| *k).map(|(r, _)| *r).collect(),
            None => decoded.clone(),
        };
        let expected: Vec<usize> = b.iter().enumerate().filter(|(_, x)| **x).map(|(i, _)| i).collect();
        prop_assert_eq!(kept, expected);

        // No decoded row lies on a page without a selected row.
        if with_pages {
            let page_of = |row: usize| first_rows.partition_point(|&f| f <= row) - 1;
            let kept_pages = s.selected_pages(&first_rows.iter().map(|&r| PageLocation { offset: 0, compressed_size: 1, first_row_index: r as u64 }).collect::<Vec<_>>()).unwrap();
            for row in decoded {
                prop_assert!(kept_pages[page_of(row)], "row {} decoded on a pruned page", row);
            }
        }
        if policy == SelectionPolicy::Selectors { prop_assert!(!plan.uses_mask()); }
    }
}

#[test]
fn from_runs_normalises_and_checks_overflow() {
    let s = RowSelection::from_runs([
        RowSelector::skip(0),
        RowSelector::select(2),
        RowSelector::select(3),
        RowSelector::skip(1),
    ])
    .unwrap();
    assert_eq!(s.runs(), vec![RowSelector::select(5), RowSelector::skip(1)]);
    assert!(RowSelection::from_runs([RowSelector::select(usize::MAX), RowSelector::skip(1)]).is_err());
}

#[test]
fn intersection_rejects_different_lengths() {
    let a = RowSelection::select_all(3);
    let b = RowSelection::from_bools(&[true; 4]);
    assert!(a.intersection(&b).is_err());
    assert!(b.union(&a).is_err());
}

#[test]
fn seed_001_worked_examples() {
    let a = RowSelection::from_runs([RowSelector::skip(100), RowSelector::select(50), RowSelector::skip(50)]).unwrap();
    let b = RowSelection::from_runs([RowSelector::select(10), RowSelector::skip(40)]).unwrap();
    assert_eq!(
        a.and_then(&b).unwrap().runs(),
        vec![RowSelector::skip(100), RowSelector::select(10), RowSelector::skip(90)]
    );
    let pages = [
        PageLocation { offset: 0, compressed_size: 10, first_row_index: 0 },
        PageLocation { offset: 10, compressed_size: 10, first_row_index: 100 },
    ];
    let s = RowSelection::from_runs([RowSelector::skip(150), RowSelector::select(10), RowSelector::skip(40)]).unwrap();
    assert_eq!(s.scan_ranges(&pages).unwrap(), vec![10..20]);
}

/// The mask hazard: rows 0..7 on three pages, rows 2..4 alone on the middle
/// page, only rows 0 and 5.. selected. A mask over everything would decode the middle page;
/// the plan must skip it as a whole and mask only the outer pages.
#[test]
fn mask_never_spans_a_pruned_page() {
    let s = RowSelection::from_bools(&[true, false, false, false, false, true, true]);
    let plan = ReadPlan::new(&s, SelectionPolicy::Mask, Some(&[0, 2, 4])).unwrap();
    assert_eq!(plan.page_counts(), (3, 1));
    assert!(plan.segments().contains(&ReadSegment::SkipPages(2)));
    let decoder = plan.decoder_selection();
    assert!(decoder.to_bools()[2..4].iter().all(|x| !x), "the pruned page's rows are never decoded");
    assert_eq!(s.selected_count(), plan.post_filter().unwrap().count_set_bits());
}

#[test]
fn read_plan_rejects_bad_page_starts() {
    let s = RowSelection::select_all(10);
    assert!(ReadPlan::new(&s, SelectionPolicy::default(), Some(&[1, 5])).is_err());
    assert!(ReadPlan::new(&s, SelectionPolicy::default(), Some(&[0, 5, 3])).is_err());
}

#[test]
fn scan_ranges_rejects_overflowing_pages() {
    let s = RowSelection::select_all(10);
    let pages = [PageLocation { offset: u64::MAX - 1, compressed_size: 5, first_row_index: 0 }];
    assert!(s.scan_ranges(&pages).is_err());
}
