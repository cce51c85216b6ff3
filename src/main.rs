fn main() {
    println!("metal-puzzles");
}
