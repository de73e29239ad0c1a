//! JSON values to Python objects and back (dicts keep key order, integers keep their size).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::spec::number::PyNumber;

/// A JSON value as the Python object `json.loads` would have produced.
pub fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        Value::Number(_) => match PyNumber::of(value).expect("a JSON number") {
            PyNumber::Int(int) => int.into_pyobject(py)?.into_any(),
            PyNumber::BigInt(text) => py.get_type::<PyInt>().call1((text,))?,
            PyNumber::Float(float) => PyFloat::new(py, float).into_any(),
        },
        Value::String(text) => PyString::new(py, text).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => to_python_dict(py, map)?.into_any(),
    })
}

pub fn to_python_dict<'py>(
    py: Python<'py>,
    map: &Map<String, Value>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, item) in map {
        dict.set_item(key, to_python(py, item)?)?;
    }
    Ok(dict)
}

/// A Python object as JSON; anything `json.dumps` could not write strictly is a TypeError
/// naming the offending type.
pub fn from_python(object: &Bound<'_, PyAny>) -> PyResult<Value> {
    if object.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = object.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if object.is_instance_of::<PyInt>() {
        if let Ok(small) = object.extract::<i64>() {
            return Ok(Value::from(small));
        }
        let text = object.str()?.to_string();
        return text
            .parse::<Number>()
            .map(Value::Number)
            .map_err(|_| PyTypeError::new_err(format!("integer {text} cannot be sent as JSON")));
    }
    if let Ok(float) = object.cast::<PyFloat>() {
        let value = float.value();
        return Number::from_f64(value).map(Value::Number).ok_or_else(|| {
            PyTypeError::new_err(format!(
                "{value} is not a finite number and cannot be sent as JSON"
            ))
        });
    }
    if let Ok(text) = object.cast::<PyString>() {
        return Ok(Value::String(text.to_str()?.to_string()));
    }
    if let Ok(dict) = object.cast::<PyDict>() {
        let mut map = Map::with_capacity(dict.len());
        for (key, item) in dict.iter() {
            map.insert(dict_key(&key)?, from_python(&item)?);
        }
        return Ok(Value::Object(map));
    }
    if object.is_instance_of::<PyList>() || object.is_instance_of::<PyTuple>() {
        let mut items = Vec::with_capacity(object.len()?);
        for item in object.try_iter()? {
            items.push(from_python(&item?)?);
        }
        return Ok(Value::Array(items));
    }
    let type_name = object
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    Err(PyTypeError::new_err(format!(
        "a {type_name} value cannot be sent as JSON"
    )))
}

/// A dict's key as a JSON object's key: only a string is one.
pub fn dict_key(key: &Bound<'_, PyAny>) -> PyResult<String> {
    let text = key
        .cast::<PyString>()
        .map_err(|_| PyTypeError::new_err(format!("dict key {} is not a string", repr(key))))?;
    Ok(text.to_str()?.to_string())
}

fn repr(object: &Bound<'_, PyAny>) -> String {
    object
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".into())
}
