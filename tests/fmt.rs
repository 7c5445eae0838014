//! Tests of the formatter: insta snapshots of messy inputs (`tests/snapshots/fmt__*.snap`) and
//! `collc fmt` / `collc fmt --check` run as a binary on files in a temporary directory.
//!
//! Update snapshots with `INSTA_UPDATE=always cargo test --test fmt`, then review the diff.

use collc::diag::FileId;
use collc::fmt::format_source;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fmt(src: &str) -> String {
    let out = match format_source(FileId(0), src) {
        Ok(s) => s,
        Err(d) => panic!("formatter refused:\n{src}\n{d:?}"),
    };
    let again = format_source(FileId(0), &out).expect("formatted output parses");
    assert_eq!(again, out, "formatting is not idempotent");
    out
}

#[test]
fn snapshot_topology_generator() {
    let src = r#"import   ring ;import "lib/boxes.coll";
param n:int=8; param bw : bandwidth=25GB/s;
generator   boxes( n :int,bw:bandwidth=25GB/s , lat : time = 0ns ){
  compute gpu [ n ] [8] ; switch sw;
      for c in 0 .. n{ for i in 0..8 {
   link gpu[c][i]<->sw:bw,latency lat , parallel 4;
   link gpu [c] [i] -> gpu[c][(i+1)%8]:bw*2,latency -1 us;
  }}
  if n>2&&!done{let x=pow(2,d)-1;}else if n==2{}
  else{ use ring(n:n,bw:bw/2) as r.inner; }
}
topology t=boxes(n: n, bw: 300GB/s);
"#;
    insta::assert_snapshot!(fmt(src));
}

#[test]
fn snapshot_declarations() {
    let src = "collective allreduce{size:1GiB;root:0;}
schedule recursive_multiplying { stages: [c8m2, a2, e8m2];model:fast; }
schedule ring;   target goal;
model m:loggp{L:2500ns;o:0.4 ns/B;G:1 ns / B;}
target time{  }
schedule auto {stages:[ a3,a4 ] ;limit:-(a - -b)*2;}
";
    insta::assert_snapshot!(fmt(src));
}

#[test]
fn snapshot_comments_and_blank_lines() {
    let src = "

// Header comment.   
// Second line.



import ring; // the ring generator


topology t {   // opening

    // first statement

    compute gpu[8];     // eight GPUs
    // a lone comment


    for i in 0..8 { // loop
        link gpu[i] <-> gpu[(i + 1) % 8] : 25 GB/s; // ring edge

    }
    // last words


}
schedule ring {
    stages: [a2, // first
        a4 // second
    ];
    limit: 1 + // continued
        2;
}
// trailing file comment";
    insta::assert_snapshot!(fmt(src));
}

#[test]
fn snapshot_expressions() {
    let src = "let a=-1;let b=!done;let c=a- -b;let d=x[c][(i+1)%8];let e=f(g(1,2),[1,2,3],h());
let f=s.t.u[0].v;let g=(a+b)*c/d%e;let h=a<b||c>=d&&e!=f;let i=0..n-1;let j=1.5..2.5;
let k=25GB/s;let l=\"x.coll\";let m=[];let n=[ -1 , -(2) ];let o=true&&false||auto;
";
    insta::assert_snapshot!(fmt(src));
}

// ---- the binary ----

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("collc-fmt-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).expect("write temp file");
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn collc(args: &[&str], file: &Path) -> i32 {
    let out = Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(args)
        .arg(file)
        .output()
        .expect("run collc");
    out.status.code().expect("collc exited normally")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).expect("read file")
}

const MESSY: &str =
    "topology t{compute gpu[8];for i in 0..8{link gpu[i]<->gpu[(i+1)%8]:25GB/s;}}\n";
const TIDY: &str = "topology t {
    compute gpu[8];
    for i in 0..8 {
        link gpu[i] <-> gpu[(i + 1) % 8] : 25 GB/s;
    }
}
";

#[test]
fn messy_formats_to_tidy() {
    assert_eq!(fmt(MESSY), TIDY);
}

#[test]
fn check_accepts_formatted_and_rejects_unformatted() {
    let dir = TempDir::new("check");
    let tidy = dir.file("tidy.coll", TIDY);
    let messy = dir.file("messy.coll", MESSY);
    assert_eq!(collc(&["fmt", "--check"], &tidy), 0);
    assert_eq!(collc(&["fmt", "--check"], &messy), 1);
    assert_eq!(read(&messy), MESSY, "--check must not write");
    assert_eq!(read(&tidy), TIDY);
}

#[test]
fn fmt_rewrites_in_place() {
    let dir = TempDir::new("rewrite");
    let messy = dir.file("messy.coll", MESSY);
    assert_eq!(collc(&["fmt"], &messy), 0);
    assert_eq!(read(&messy), TIDY);
    assert_eq!(collc(&["fmt", "--check"], &messy), 0);
}

#[test]
fn syntax_errors_leave_the_file_alone() {
    let dir = TempDir::new("broken");
    let text = "topology t{compute gpu[8]\nlink a<->b:1GB/s;}\n";
    let broken = dir.file("broken.coll", text);
    assert_eq!(collc(&["fmt"], &broken), 1);
    assert_eq!(read(&broken), text);
    assert_eq!(collc(&["fmt", "--check"], &broken), 1);
    assert_eq!(read(&broken), text);
    let bad_char = dir.file("bad_char.coll", "let x = 1 $ 2;\n");
    assert_eq!(collc(&["fmt"], &bad_char), 1);
    assert_eq!(read(&bad_char), "let x = 1 $ 2;\n");
}
