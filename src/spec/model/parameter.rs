//! Parameter types: what `parameters.<name>.type` and a `table`'s column nodes may say. The
//! linter and options validation dispatch on these; both also run on specs that fail the
//! run gate, so they read the schemas themselves rather than a built model.

/// A parameter's declared `type`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumString, strum::Display,
)]
#[strum(serialize_all = "snake_case")]
pub enum ParameterType {
    Integer,
    Boolean,
    Enum,
    Text,
    Id,
    Table,
}

impl ParameterType {
    /// Every parameter type, in the order the linter lists them.
    pub const ALL: [ParameterType; 6] = [
        ParameterType::Integer,
        ParameterType::Boolean,
        ParameterType::Enum,
        ParameterType::Text,
        ParameterType::Id,
        ParameterType::Table,
    ];

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(text: &str) -> Option<ParameterType> {
        text.parse().ok()
    }

    /// The names of every type, `", "`-joined (for "one of ..." texts).
    pub fn names() -> String {
        ParameterType::ALL.map(ParameterType::as_str).join(", ")
    }
}

/// A node of a `table` parameter's `columns` tree.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumString, strum::Display,
)]
#[strum(serialize_all = "snake_case")]
pub enum ColumnType {
    /// An inner node with its own `fields` tree.
    Object,
    Integer,
    Boolean,
    Enum,
}

impl ColumnType {
    pub const ALL: [ColumnType; 4] = [
        ColumnType::Object,
        ColumnType::Integer,
        ColumnType::Boolean,
        ColumnType::Enum,
    ];

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(text: &str) -> Option<ColumnType> {
        text.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_round_trip_through_their_names() {
        for parameter_type in ParameterType::ALL {
            assert_eq!(
                ParameterType::parse(parameter_type.as_str()),
                Some(parameter_type)
            );
        }
        for column_type in ColumnType::ALL {
            assert_eq!(ColumnType::parse(column_type.as_str()), Some(column_type));
        }
        assert_eq!(ParameterType::parse("table"), Some(ParameterType::Table));
        assert_eq!(ColumnType::parse("table"), None);
    }
}
