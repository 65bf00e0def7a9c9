//! A document's untyped value, borrowing its text from the document where it can, and
//! typed objects deserialized straight from it: no `serde_json::Value` is built on the
//! way, and a field no type reads is skipped without being copied.
//!
//! Deserialization follows `serde_json::from_value` (same visitor calls, same error
//! type and messages), so an object reads the same whichever reader parsed its document.

use std::borrow::Cow;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};
use serde_json::{Error, Map, Number, Value};

/// One node of a document: what a YAML or JSON reader gives before any type is known.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Seq(Vec<Node<'a>>),
    /// Entries in document order; keys are unique (readers decline duplicates).
    Map(Vec<(Cow<'a, str>, Node<'a>)>),
}

impl<'a> Node<'a> {
    /// The node of a value read by another reader, borrowing its text.
    pub(crate) fn borrowing(value: &'a Value) -> Node<'a> {
        match value {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(*b),
            Value::Number(n) => Node::Number(n.clone()),
            Value::String(s) => Node::String(Cow::Borrowed(s)),
            Value::Array(items) => Node::Seq(items.iter().map(Node::borrowing).collect()),
            Value::Object(map) => Node::Map(
                map.iter()
                    .map(|(key, value)| (Cow::Borrowed(key.as_str()), Node::borrowing(value)))
                    .collect(),
            ),
        }
    }

    /// The same value as a `serde_json::Value`: what the readers are compared by.
    #[cfg_attr(not(any(test, feature = "cross-check")), allow(dead_code))]
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => Value::Number(n.clone()),
            Node::String(s) => Value::String(s.as_ref().to_owned()),
            Node::Seq(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Node::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(key, value)| (key.as_ref().to_owned(), value.to_value()))
                    .collect::<Map<String, Value>>(),
            ),
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Node::String(s) => Some(s),
            _ => None,
        }
    }

    /// A mapping's value for `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Node<'a>> {
        match self {
            Node::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut Node<'a>> {
        match self {
            Node::Map(entries) => entries.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets a mapping's `key` (added last when absent); nothing for another node.
    pub(crate) fn set(&mut self, key: &'static str, value: Node<'a>) {
        if let Node::Map(entries) = self {
            match entries.iter_mut().find(|(k, _)| k == key) {
                Some((_, old)) => *old = value,
                None => entries.push((Cow::Borrowed(key), value)),
            }
        }
    }

    /// Removes a mapping's `key`, giving its value back.
    pub(crate) fn remove(&mut self, key: &str) -> Option<Node<'a>> {
        match self {
            Node::Map(entries) => {
                let at = entries.iter().position(|(k, _)| k == key)?;
                Some(entries.remove(at).1)
            }
            _ => None,
        }
    }

    /// Keeps the mapping's entries whose key passes.
    pub(crate) fn retain_keys(&mut self, keep: impl Fn(&str) -> bool) {
        if let Node::Map(entries) = self {
            entries.retain(|(key, _)| keep(key));
        }
    }

    fn unexpected(&self) -> Unexpected<'_> {
        match self {
            Node::Null => Unexpected::Unit,
            Node::Bool(b) => Unexpected::Bool(*b),
            Node::Number(n) => number_unexpected(n),
            Node::String(s) => Unexpected::Str(s),
            Node::Seq(_) => Unexpected::Seq,
            Node::Map(_) => Unexpected::Map,
        }
    }
}

fn number_unexpected(n: &Number) -> Unexpected<'static> {
    if let Some(u) = n.as_u64() {
        Unexpected::Unsigned(u)
    } else if let Some(i) = n.as_i64() {
        Unexpected::Signed(i)
    } else {
        Unexpected::Float(n.as_f64().unwrap_or_default())
    }
}

/// A typed value read from a node, with `serde_json::from_value`'s errors.
pub(crate) fn from_node<T: de::DeserializeOwned>(node: &Node<'_>) -> Result<T, String> {
    // The field's path is tracked only once decoding failed: tracking it costs every
    // object, and nearly every object decodes.
    T::deserialize(node).map_err(|_| match serde_path_to_error::deserialize::<_, T>(node) {
        Err(err) => with_path(err),
        Ok(_) => "cannot be decoded".to_owned(),
    })
}

/// A decoding error, after the path of the field it is about, if any.
fn with_path<E: std::fmt::Display>(err: serde_path_to_error::Error<E>) -> String {
    if err.path().iter().next().is_some() {
        err.to_string()
    } else {
        err.into_inner().to_string()
    }
}

impl<'de, 'a: 'de> Deserializer<'de> for &'de Node<'a> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Node::Null => visitor.visit_unit(),
            Node::Bool(b) => visitor.visit_bool(*b),
            Node::Number(n) => n.deserialize_any(visitor),
            Node::String(s) => visitor.visit_borrowed_str(s),
            Node::Seq(items) => {
                let mut access = Items(items.iter());
                let value = visitor.visit_seq(&mut access)?;
                match access.0.len() {
                    0 => Ok(value),
                    _ => Err(de::Error::invalid_length(
                        items.len(),
                        &"fewer elements in array",
                    )),
                }
            }
            Node::Map(entries) => {
                let mut access = Entries {
                    entries: entries.iter(),
                    value: None,
                };
                let value = visitor.visit_map(&mut access)?;
                match access.entries.len() {
                    0 => Ok(value),
                    _ => Err(de::Error::invalid_length(
                        entries.len(),
                        &"fewer elements in map",
                    )),
                }
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Node::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Node::Null => visitor.visit_unit(),
            _ => Err(de::Error::invalid_type(self.unexpected(), &visitor)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            Node::String(variant) => {
                visitor.visit_enum(de::value::BorrowedStrDeserializer::<Error>::new(variant))
            }
            Node::Map(entries) => match entries.as_slice() {
                [(variant, value)] => visitor.visit_enum(Variant { variant, value }),
                _ => Err(de::Error::invalid_value(
                    Unexpected::Map,
                    &"map with a single key",
                )),
            },
            other => Err(de::Error::invalid_type(
                other.unexpected(),
                &"string or map",
            )),
        }
    }

    /// A field no type reads: skipped, nothing is built from it.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit_struct seq tuple tuple_struct map struct identifier
    }
}

struct Items<'de, 'a>(std::slice::Iter<'de, Node<'a>>);

impl<'de, 'a: 'de> SeqAccess<'de> for Items<'de, 'a> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0.next().map(|item| seed.deserialize(item)).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Entries<'de, 'a> {
    entries: std::slice::Iter<'de, (Cow<'a, str>, Node<'a>)>,
    value: Option<&'de Node<'a>>,
}

impl<'de, 'a: 'de> MapAccess<'de> for Entries<'de, 'a> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        let key: &'de str = key;
        seed.deserialize(key.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(value),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// An enum written as a mapping of its one variant to the variant's content.
struct Variant<'de, 'a> {
    variant: &'de Cow<'a, str>,
    value: &'de Node<'a>,
}

impl<'de, 'a: 'de> EnumAccess<'de> for Variant<'de, 'a> {
    type Error = Error;
    type Variant = &'de Node<'a>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self::Variant), Error> {
        let variant: &'de str = self.variant;
        let variant = seed.deserialize(variant.into_deserializer())?;
        Ok((variant, self.value))
    }
}

impl<'de, 'a: 'de> VariantAccess<'de> for &'de Node<'a> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self {
            Node::Null => Ok(()),
            other => Err(de::Error::invalid_type(other.unexpected(), &"unit variant")),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self {
            Node::Seq(_) => self.deserialize_any(visitor),
            other => Err(de::Error::invalid_type(
                other.unexpected(),
                &"tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            Node::Map(_) => self.deserialize_any(visitor),
            other => Err(de::Error::invalid_type(
                other.unexpected(),
                &"struct variant",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Every value deserializes from its node as `serde_json::from_value` deserializes it.
    fn same<T: de::DeserializeOwned + std::fmt::Debug + PartialEq>(value: Value) {
        let node = Node::borrowing(&value);
        let direct = from_node::<T>(&node);
        let reference = serde_path_to_error::deserialize::<_, T>(&value).map_err(with_path);
        assert_eq!(direct, reference, "for {value}");
    }

    #[test]
    fn objects_and_errors_are_those_of_serde_json() {
        use k8s_openapi::api::core::v1::Service;
        use k8s_openapi::api::networking::v1::Ingress;
        let service = json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "a", "namespace": "b", "labels": {"x": "y"}, "unknown": [1, {"z": null}]},
            "spec": {"ports": [{"name": "http", "port": 80, "targetPort": "web"}, {"port": 81, "targetPort": 8081}],
                     "clusterIP": null, "type": "ClusterIP"}});
        same::<Service>(service);
        same::<Service>(json!({"metadata": {"name": 5}}));
        same::<Service>(json!({"metadata": {"name": null, "labels": {"a": 1}}}));
        same::<Service>(json!({"spec": {"ports": [{"port": "eighty"}]}}));
        same::<Service>(json!({"spec": {"ports": [{"port": -1}]}}));
        same::<Service>(json!({"spec": {"ports": {"port": 1}}}));
        same::<Service>(json!({"spec": {"ports": [{"port": 70000}]}}));
        same::<Service>(json!({"spec": {"ports": [{"port": 1.5}]}}));
        same::<Service>(json!({"spec": true}));
        same::<Service>(json!([1, 2]));
        same::<Ingress>(
            json!({"metadata": {"name": "i", "creationTimestamp": "2024-01-02T03:04:05Z"},
            "spec": {"rules": [{"host": "a.test", "http": {"paths": [{"path": "/", "pathType": "Prefix",
            "backend": {"service": {"name": "s", "port": {"number": 80}}}}]}}]}}),
        );
        same::<Ingress>(json!({"metadata": {"creationTimestamp": "yesterday"}}));
        same::<Ingress>(
            json!({"spec": {"rules": [{"http": {"paths": [{"pathType": "Prefix"}]}}]}}),
        );
        same::<Value>(json!({"a": [1, -2, 2.5, "x", null, true, {"b": {}}]}));
    }

    #[test]
    fn gateway_api_enums_read_from_strings_and_refuse_unknown_values() {
        use crate::HttpRoute as HTTPRoute;
        let route = |kind: &str| json!({"metadata": {"name": "r"}, "spec": {"rules": [{"matches": [{"path": {"type": kind, "value": "/"}}]}]}});
        same::<HTTPRoute>(route("PathPrefix"));
        same::<HTTPRoute>(route("Sideways"));
        same::<HTTPRoute>(
            json!({"metadata": {"name": "r"}, "spec": {"rules": [{"matches": [{"path": {"type": {"PathPrefix": null}}}]}]}}),
        );
        same::<HTTPRoute>(
            json!({"metadata": {"name": "r"}, "spec": {"rules": [{"matches": [{"path": {"type": 3}}]}]}}),
        );
    }
}
