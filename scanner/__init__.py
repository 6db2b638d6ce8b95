"""Photo -> board state: find the board, rectify it, read it with ONNX models, decode with the rules.

``Scanner().scan(path, "sagrada")`` returns a ``ScanResult`` whose ``document`` is the FORMATS.md
board state with its ``scan`` block.
"""

from scanner.errors import BoardNotFoundError, ModelError, PhotoError
from scanner.photo import Photo, load_photo
from scanner.pipeline import Scanner, ScanResult, merge_documents

__all__ = ["BoardNotFoundError", "ModelError", "Photo", "PhotoError", "ScanResult", "Scanner", "load_photo", "merge_documents"]
