use super::*;

#[test]
fn fair_rates_share_a_bottleneck_equally_and_give_the_rest_to_others() {
    // Links 0 (10) and 1 (4); flow a on 0, flow b on 0 and 1, flow c on 1.
    let caps = [10.0, 4.0];
    let r = fair_rates(&caps, &[&[0], &[0, 1], &[1]]);
    assert_eq!(r, vec![8.0, 2.0, 2.0]);
}

#[test]
fn a_flow_crossing_a_link_twice_counts_twice() {
    let r = fair_rates(&[6.0], &[&[0, 0], &[0]]);
    assert_eq!(r, vec![2.0, 2.0]);
}

#[test]
fn an_empty_route_is_unbounded() {
    let r = fair_rates(&[1.0], &[&[]]);
    assert!(r[0].is_infinite());
}
