//! Text from the network (or from files the peer influenced) made safe to print on a
//! terminal: control characters — C0, DEL and C1, which could move the cursor, recolour or
//! retitle a terminal — are written as visible `\u{..}` escapes. Tabs and newlines pass.

/// `text` with every control character except tab and newline escaped.
pub fn for_terminal(text: &str) -> String {
    let mut safe = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\n' && c != '\t' {
            safe.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            safe.push(c);
        }
    }
    safe
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_become_visible() {
        assert_eq!(for_terminal("rock\tpaper\n"), "rock\tpaper\n");
        assert_eq!(
            for_terminal("\u{1b}[2Jboom\r\u{7}"),
            "\\u{1b}[2Jboom\\u{d}\\u{7}"
        );
        assert_eq!(for_terminal("\u{9b}31m\u{7f}"), "\\u{9b}31m\\u{7f}");
    }
}
